class Solution {
public:
    ListNode* mergeKLists(vector<ListNode*>& lists) {
        ListNode head;
        ListNode* tail = &head;
        for (ListNode* l : lists)
            for (; l; l = l->next) tail = tail->next = new ListNode(l->val);
        return head.next;
    }
};
