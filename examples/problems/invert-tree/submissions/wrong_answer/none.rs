use std::cell::RefCell;
use std::rc::Rc;

impl Solution {
    pub fn invert_tree(_root: Option<Rc<RefCell<TreeNode>>>) -> Option<Rc<RefCell<TreeNode>>> {
        None
    }
}
