#!/usr/bin/env python3
"""Writes the function-signature example problems under examples/problems (problem.yaml,
the statement, function/signature.json and config.yaml, data/sample and data/secret) from
the references below. Submissions are written by hand and kept. Deterministic: run again
after changing this script; the output is committed."""
import json, math, os, random, shutil

ROOT = os.path.join(os.path.dirname(__file__), "..", "examples", "problems")


def dump(value):
    return json.dumps(value, separators=(",", ":"))


def write_problem(slug, name, statement, signature, cases, compare=None, time_limit=2, extra_yaml=""):
    """cases: (group, name, [argument values...] or (ops, args), expected)."""
    root = os.path.join(ROOT, slug)
    for sub in ("data", "function"):
        shutil.rmtree(os.path.join(root, sub), ignore_errors=True)
    os.makedirs(os.path.join(root, "function"), exist_ok=True)
    with open(os.path.join(root, "problem.yaml"), "w") as f:
        f.write(f"name: {name}\nlimits:\n  time_limit: {time_limit}\n  memory: 512\n{extra_yaml}")
    with open(os.path.join(root, "problem.md"), "w") as f:
        f.write(statement.strip() + "\n")
    with open(os.path.join(root, "function", "signature.json"), "w") as f:
        json.dump(signature, f, indent=2)
        f.write("\n")
    if compare:
        with open(os.path.join(root, "function", "config.yaml"), "w") as f:
            f.write(compare)
    for group, case, args, expected in cases:
        directory = os.path.join(root, "data", group)
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, case + ".in"), "w") as f:
            f.write("".join(dump(a) + "\n" for a in args))
        with open(os.path.join(directory, case + ".ans"), "w") as f:
            f.write(dump(expected) + "\n")


# Two Sum ------------------------------------------------------------------------------------
def two_sum_case(rng, n):
    """A random case with exactly one answer."""
    while True:
        nums = [rng.randint(-10**9, 10**9) for _ in range(n)]
        i, j = rng.sample(range(n), 2)
        target = nums[i] + nums[j]
        if not -2**31 <= target < 2**31:
            continue
        pairs, seen = [], {}
        for k, x in enumerate(nums):
            pairs += [[p, k] for p in seen.get(target - x, [])]
            seen.setdefault(x, []).append(k)
        if len(pairs) == 1:
            return [nums, target], pairs[0]


def two_sum():
    rng = random.Random(1)
    cases = [
        ("sample", "1", [[2, 7, 11, 15], 9], [0, 1]),
        ("sample", "2", [[3, 2, 4], 6], [1, 2]),
        ("sample", "3", [[3, 3], 6], [0, 1]),
        ("secret", "01", [[-1, -2, -3, -4, -5], -8], [2, 4]),
        ("secret", "02", [[0, 4, 3, 0], 0], [0, 3]),
        ("secret", "03", [[2147483647, -1, 1], 2147483646], [0, 1]),
    ]
    for k in range(4, 10):
        args, answer = two_sum_case(rng, 10**4)
        cases.append(("secret", f"{k:02d}", args, answer))
    # The answer's indices may come in any order: the unique pair decides.
    write_problem(
        "two-sum", "Two Sum",
        """
Given an array of integers `nums` and an integer `target`, return the indices of the two
numbers that add up to `target`. Each input has exactly one solution, and an element may not
be used twice. The two indices may be returned in any order.

Constraints: $2 \\le n \\le 10^4$, $-10^9 \\le nums[i] \\le 10^9$, $-2^{31} \\le target < 2^{31}$.
""",
        {"name": "twoSum", "params": [{"name": "nums", "type": "integer[]"}, {"name": "target", "type": "integer"}],
         "return": {"type": "integer[]", "size": 2}},
        cases, compare="compare: any_order\n")


# Pow(x, n) ----------------------------------------------------------------------------------
def my_pow():
    rng = random.Random(2)
    cases = [
        ("sample", "1", [2.0, 10], 1024.0),
        ("sample", "2", [2.1, 3], 9.261),
        ("sample", "3", [2.0, -2], 0.25),
        ("secret", "01", [1.0, -2147483648], 1.0),
        ("secret", "02", [-1.0, 2147483647], -1.0),
        ("secret", "03", [0.00001, 2147483647], 0.0),
        ("secret", "04", [1.0000001, 100000000], math.pow(1.0000001, 100000000)),
    ]
    for k in range(5, 12):
        x = round(rng.uniform(-2, 2), 4) or 1.5
        n = rng.randint(-30, 30)
        cases.append(("secret", f"{k:02d}", [x, n], math.pow(x, n)))
    write_problem(
        "my-pow", "Pow(x, n)",
        """
Implement `myPow(x, n)`, which calculates $x$ raised to the power $n$. Answers within an
absolute or relative error of $10^{-5}$ are accepted.

Constraints: $-100 < x < 100$, $-2^{31} \\le n < 2^{31}$, the answer is within $[-10^4, 10^4]$.
""",
        {"name": "myPow", "params": [{"name": "x", "type": "double"}, {"name": "n", "type": "integer"}],
         "return": {"type": "double"}},
        cases, compare="compare: float\nabsolute_tolerance: 1e-5\nrelative_tolerance: 1e-5\n")


# Group Anagrams -----------------------------------------------------------------------------
def group_anagrams_answer(words):
    groups = {}
    for w in words:
        groups.setdefault("".join(sorted(w)), []).append(w)
    return list(groups.values())


def group_anagrams():
    rng = random.Random(3)
    cases = [
        ("sample", "1", [["eat", "tea", "tan", "ate", "nat", "bat"]], None),
        ("sample", "2", [[""]], None),
        ("sample", "3", [["a"]], None),
        ("secret", "01", [["", "b", ""]], None),
    ]
    for k in range(2, 8):
        bases = ["".join(rng.choice("abcde") for _ in range(rng.randint(1, 6))) for _ in range(200)]
        words = []
        for _ in range(2000):
            b = list(rng.choice(bases))
            rng.shuffle(b)
            words.append("".join(b))
        cases.append(("secret", f"{k:02d}", [words], None))
    cases = [(g, c, a, group_anagrams_answer(a[0])) for g, c, a, _ in cases]
    write_problem(
        "group-anagrams", "Group Anagrams",
        """
Given an array of strings `strs`, group the anagrams together: words made of the same
letters belong to one group. Return the groups in any order, each group's words in any order.

Constraints: $1 \\le n \\le 10^4$, words of at most 100 lowercase letters.
""",
        {"name": "groupAnagrams", "params": [{"name": "strs", "type": "string[]"}],
         "return": {"type": "list<list<string>>"}},
        cases, compare="compare: any_order_deep\n")


# Invert Binary Tree -------------------------------------------------------------------------
def level_order_to_tree(values):
    if not values:
        return None
    nodes = [None if v is None else [v, None, None] for v in values]
    child = 1
    for node in nodes:
        if child >= len(nodes):
            break
        if node is None:
            continue
        node[1] = nodes[child]; child += 1
        if child < len(nodes):
            node[2] = nodes[child]; child += 1
    return nodes[0]


def tree_to_level_order(root):
    out, queue, i = [], [root], 0
    while i < len(queue):
        node = queue[i]; i += 1
        if node is None:
            out.append(None)
            continue
        out.append(node[0])
        queue.append(node[1]); queue.append(node[2])
    while out and out[-1] is None:
        out.pop()
    return out


def invert(root):
    stack = [root]
    while stack:
        node = stack.pop()
        if node is not None:
            node[1], node[2] = node[2], node[1]
            stack.append(node[1]); stack.append(node[2])
    return root


def random_tree(rng, n):
    values = [rng.randint(-1000, 1000) for _ in range(n)]
    root = [values[0], None, None]
    nodes = [root]
    for v in values[1:]:
        node = [v, None, None]
        while True:
            parent = rng.choice(nodes)
            side = rng.choice((1, 2))
            if parent[side] is None:
                parent[side] = node
                break
        nodes.append(node)
    return tree_to_level_order(root)


def invert_tree():
    rng = random.Random(4)
    inputs = [("sample", "1", [4, 2, 7, 1, 3, 6, 9]), ("sample", "2", [2, 1, 3]), ("sample", "3", []),
              ("secret", "01", [1, None, 2, None, 3])]
    for k in range(2, 6):
        inputs.append(("secret", f"{k:02d}", random_tree(rng, rng.randint(1, 3000))))
    # A chain of 1,000 nodes: solutions that recurse go 1,000 frames deep (the judge's tests
    # go 100,000 deep).
    chain = [1]
    for v in range(2, 1_001):
        chain += [None, v]
    inputs.append(("secret", "06-deep", chain))
    cases = [(g, c, [v], tree_to_level_order(invert(level_order_to_tree(v)))) for g, c, v in inputs]
    write_problem(
        "invert-tree", "Invert Binary Tree",
        """
Given the `root` of a binary tree, invert the tree (mirror it: every node's left and right
children swap) and return its root. Trees are written in level order, `null` marking a
missing child.

Constraints: at most $10^5$ nodes; a tree may be as deep as it has nodes.
""",
        {"name": "invertTree", "params": [{"name": "root", "type": "TreeNode"}], "return": {"type": "TreeNode"}},
        cases)


# Merge k Sorted Lists -----------------------------------------------------------------------
def merge_k_lists():
    rng = random.Random(5)
    inputs = [("sample", "1", [[1, 4, 5], [1, 3, 4], [2, 6]]), ("sample", "2", []), ("sample", "3", [[]]),
              ("secret", "01", [[], [-5, 5], []])]
    for k in range(2, 7):
        lists = [sorted(rng.randint(-10**4, 10**4) for _ in range(rng.randint(0, 500)))
                 for _ in range(rng.randint(1, 50))]
        inputs.append(("secret", f"{k:02d}", lists))
    cases = [(g, c, [v], sorted(x for l in v for x in l)) for g, c, v in inputs]
    write_problem(
        "merge-k-lists", "Merge k Sorted Lists",
        """
You are given an array of `k` linked lists, each sorted in ascending order. Merge them into
one sorted linked list and return it.

Constraints: $0 \\le k \\le 10^4$, at most $10^4$ nodes in all, values within $[-10^4, 10^4]$.
""",
        {"name": "mergeKLists", "params": [{"name": "lists", "type": "ListNode[]"}], "return": {"type": "ListNode"}},
        cases)


# LRU Cache ----------------------------------------------------------------------------------
def lru_run(ops, args):
    from collections import OrderedDict
    out, cache, cap = [], OrderedDict(), 0
    for op, a in zip(ops, args):
        if op == "LRUCache":
            cap = a[0]; out.append(None)
        elif op == "get":
            if a[0] in cache:
                cache.move_to_end(a[0]); out.append(cache[a[0]])
            else:
                out.append(-1)
        else:
            cache[a[0]] = a[1]; cache.move_to_end(a[0])
            if len(cache) > cap:
                cache.popitem(last=False)
            out.append(None)
    return out


def lru_cache():
    rng = random.Random(6)
    inputs = [("sample", "1", ["LRUCache", "put", "put", "get", "put", "get", "put", "get", "get", "get"],
               [[2], [1, 1], [2, 2], [1], [3, 3], [2], [4, 4], [1], [3], [4]]),
              ("secret", "01", ["LRUCache", "get", "put", "get"], [[1], [5], [5, 7], [5]])]
    for k in range(2, 5):
        cap = rng.randint(1, 50)
        ops, args = ["LRUCache"], [[cap]]
        for _ in range(10_000):
            key = rng.randint(0, 100)
            if rng.random() < 0.5:
                ops.append("get"); args.append([key])
            else:
                ops.append("put"); args.append([key, rng.randint(0, 10**5)])
        inputs.append(("secret", f"{k:02d}", ops, args))
    cases = [(g, c, (ops, args), lru_run(ops, args)) for g, c, ops, args in inputs]
    cases = [(g, c, [ops, args], out) for g, c, (ops, args), out in cases]
    write_problem(
        "lru-cache", "LRU Cache",
        """
Design a data structure for a Least Recently Used (LRU) cache:

- `LRUCache(int capacity)` makes a cache of positive size `capacity`;
- `int get(int key)` returns the value of `key` if it is in the cache, else `-1`;
- `void put(int key, int value)` sets the value of `key`, adding it if it is not there;
  when the cache then holds more than `capacity` keys, the least recently used one goes.

`get` and `put` should each take $O(1)$ on average. A test is a list of calls and their
arguments; the answer lists each call's result (`null` for the constructor and `put`).
""",
        {"classname": "LRUCache", "constructor": {"params": [{"name": "capacity", "type": "integer"}]},
         "methods": [
             {"name": "get", "params": [{"name": "key", "type": "integer"}], "return": {"type": "integer"}},
             {"name": "put", "params": [{"name": "key", "type": "integer"}, {"name": "value", "type": "integer"}],
              "return": {"type": "void"}}],
         "return": {"type": "boolean"}, "systemdesign": True},
        cases)


# Rotate Image -------------------------------------------------------------------------------
def rotate_image():
    rng = random.Random(7)
    inputs = [("sample", "1", [[1, 2, 3], [4, 5, 6], [7, 8, 9]]),
              ("sample", "2", [[5, 1, 9, 11], [2, 4, 8, 10], [13, 3, 6, 7], [15, 14, 12, 16]]),
              ("secret", "01", [[1]])]
    for k in range(2, 6):
        n = rng.randint(2, 20)
        inputs.append(("secret", f"{k:02d}", [[rng.randint(-1000, 1000) for _ in range(n)] for _ in range(n)]))
    cases = [(g, c, [m], [list(row) for row in zip(*m[::-1])]) for g, c, m in inputs]
    write_problem(
        "rotate-image", "Rotate Image",
        """
You are given an $n \\times n$ matrix. Rotate it by 90 degrees clockwise, in place: change
the given matrix, do not return another one.

Constraints: $1 \\le n \\le 20$, values within $[-1000, 1000]$.
""",
        {"name": "rotate", "params": [{"name": "matrix", "type": "integer[][]"}], "return": {"type": "void"},
         "output": {"paramindex": 0}},
        cases)


if __name__ == "__main__":
    two_sum()
    my_pow()
    group_anagrams()
    invert_tree()
    merge_k_lists()
    lru_cache()
    rotate_image()
