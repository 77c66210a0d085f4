class Solution {
public:
    TreeNode* invertTree(TreeNode* root) {
        return root;
    }
};
