class Solution {
    public ListNode mergeKLists(ListNode[] lists) {
        return lists.length == 0 ? null : lists[0];
    }
}
