impl Solution {
    pub fn merge_k_lists(lists: Vec<Option<Box<ListNode>>>) -> Option<Box<ListNode>> {
        let mut values = Vec::new();
        for mut list in lists {
            while let Some(node) = list {
                values.push(node.val);
                list = node.next;
            }
        }
        let mut head = None;
        for &val in values.iter().rev() {
            head = Some(Box::new(ListNode { val, next: head }));
        }
        head
    }
}
