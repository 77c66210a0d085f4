# UltiCode's harness for function problems (generated). The user's code is solution.py; it
# runs in a namespace of its own with the imports LeetCode users expect.
import json
import os
import sys
import threading
import traceback

sys.setrecursionlimit(1_000_000)
threading.stack_size(512 * 1024 * 1024)


class ListNode:
    def __init__(self, val=0, next=None):
        self.val = val
        self.next = next


class TreeNode:
    def __init__(self, val=0, left=None, right=None):
        self.val = val
        self.left = left
        self.right = right


_UC_PRELUDE = """
from typing import *
import collections, heapq, bisect, math, itertools, functools, string, re, random, operator, sys
from collections import *
from heapq import *
from bisect import *
from itertools import *
from functools import *
"""

_uc_ns = {"__name__": "solution", "__builtins__": __builtins__, "ListNode": ListNode, "TreeNode": TreeNode}


class _UcInvalid(Exception):
    pass


def _uc_write(data):
    """A line on the report channel (descriptor 3), then the supervisor's acknowledgement
    (descriptor 4): the harness is stopped while the line is stamped."""
    view = memoryview(data)
    while view:
        view = view[os.write(3, view):]
    os.read(4, 1)


def _uc_offsets():
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass

    def at(fd):
        try:
            return os.lseek(fd, 0, os.SEEK_CUR)
        except OSError:
            return -1

    return at(1), at(2)


def _uc_begin(k):
    _uc_write(b'{"begin":%d}\n' % k)


def _uc_end(k, key, text):
    out, err = _uc_offsets()
    _uc_write(('{"case":%d,"stdout":%d,"stderr":%d,"%s":%s}\n' % (k, out, err, key, text)).encode("utf-8", "replace"))


def _uc_describe(exc, call=None):
    frames = []
    for frame, line in traceback.walk_tb(exc.__traceback__):
        if frame.f_code.co_filename == "solution.py":
            frames.append({"line": line, "function": frame.f_code.co_name})
    if len(frames) > 20:
        frames = frames[:10] + frames[-10:]
    try:
        message = str(exc)
    except Exception:
        message = ""
    error = {"type": type(exc).__name__, "message": message[:4096], "frames": frames}
    if call is not None:
        error["call"] = call
    return json.dumps(error)


def _uc_load_error(kind, exc=None, message=""):
    if exc is not None:
        error = json.loads(_uc_describe(exc))
    else:
        error = {"type": "NameError", "message": message, "frames": []}
    error["kind"] = kind
    _uc_write((json.dumps({"load_error": error}) + "\n").encode("utf-8", "replace"))


# Types: "i" integer or long, "d" double, "b" boolean, "c" character, "s" string,
# "L" ListNode, "T" TreeNode, ("a", element) an array or list.
def _uc_plain(t):
    return t in ("i", "b", "c", "s") or (isinstance(t, tuple) and _uc_plain(t[1]))


def _uc_in(t, v):
    if t == "L":
        head = None
        for x in reversed(v):
            head = ListNode(x, head)
        return head
    if t == "T":
        if not v:
            return None
        nodes = [None if x is None else TreeNode(x) for x in v]
        child = 1
        for node in nodes:
            if child >= len(nodes):
                break
            if node is None:
                continue
            node.left = nodes[child]
            child += 1
            if child < len(nodes):
                node.right = nodes[child]
                child += 1
        return nodes[0]
    if t == "d":
        return float(v)
    if isinstance(t, tuple) and not _uc_plain(t):
        return [_uc_in(t[1], x) for x in v]
    return v


def _uc_out(t, v):
    if _uc_plain(t):
        try:
            return json.dumps(v, separators=(",", ":"), allow_nan=False)
        except (TypeError, ValueError):
            pass
    parts = []
    _uc_walk(t, v, parts)
    return "".join(parts)


def _uc_walk(t, v, out):
    if v is None:
        out.append("null")
    elif t == "d" and isinstance(v, (int, float)) and not isinstance(v, bool):
        f = float(v)
        if f != f:
            out.append('"NaN"')
        elif f in (float("inf"), float("-inf")):
            out.append('"Infinity"' if f > 0 else '"-Infinity"')
        else:
            out.append(repr(f))
    elif t == "L":
        if not hasattr(v, "val"):
            raise _UcInvalid("returned a %s where a ListNode is expected" % type(v).__name__)
        slow = fast = v
        while fast is not None and fast.next is not None:
            slow, fast = slow.next, fast.next.next
            if slow is fast:
                raise _UcInvalid("the returned linked list has a cycle")
        values = []
        while v is not None:
            values.append(v.val)
            v = v.next
        out.append(json.dumps(values))
    elif t == "T":
        if not hasattr(v, "val"):
            raise _UcInvalid("returned a %s where a TreeNode is expected" % type(v).__name__)
        seen, queue, items, i = set(), [v], [], 0
        while i < len(queue):
            node = queue[i]
            i += 1
            if node is None:
                items.append("null")
                continue
            if id(node) in seen:
                raise _UcInvalid("the returned tree has a cycle or a shared node")
            seen.add(id(node))
            items.append(json.dumps(node.val))
            queue.append(node.left)
            queue.append(node.right)
        while items and items[-1] == "null":
            items.pop()
        out.append("[" + ",".join(items) + "]")
    elif isinstance(t, tuple):
        if not isinstance(v, (list, tuple)):
            raise _UcInvalid("returned a %s where a list is expected" % type(v).__name__)
        out.append("[")
        for i, x in enumerate(v):
            if i:
                out.append(",")
            _uc_walk(t[1], x, out)
        out.append("]")
    else:
        try:
            out.append(json.dumps(v, allow_nan=False))
        except (TypeError, ValueError):
            raise _UcInvalid("returned a %s, which is not a JSON value" % type(v).__name__)


def _uc_load():
    exec(_UC_PRELUDE, _uc_ns)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "solution.py")
    with open(path, encoding="utf-8") as f:
        source = f.read()
    exec(compile(source, "solution.py", "exec"), _uc_ns)


def _uc_main(target):
    lines = [line for line in sys.stdin.buffer.read().decode("utf-8").split("\n") if line.strip()]
    try:
        _uc_load()
    except BaseException as e:
        _uc_load_error("exception", e)
        return
    if target not in _uc_ns:
        _uc_load_error("missing", message="solution.py does not define %s" % target)
        return
    for k, line in enumerate(lines):
        _uc_case(k, line)


def _uc_run(target):
    failed = []

    def body():
        try:
            _uc_main(target)
        except BaseException:
            traceback.print_exc()
            failed.append(True)

    thread = threading.Thread(target=body)
    thread.start()
    thread.join()
    _uc_offsets()
    os._exit(3 if failed else 0)
