var mergeKLists = function(lists) {
    const values = [];
    for (let l of lists) for (; l; l = l.next) values.push(l.val);
    values.sort((a, b) => b - a);
    let head = null;
    for (let i = values.length - 1; i >= 0; i--) head = new ListNode(values[i], head);
    return head;
};
