// UltiCode's harness for function problems (generated). The user's code is solution.js; it
// runs as a script of its own in this context, and the harness finds what the signature
// names among its global bindings.
"use strict";
const uc_fs = require("fs");
const uc_vm = require("vm");

function ListNode(val, next) {
    this.val = val === undefined ? 0 : val;
    this.next = next === undefined ? null : next;
}
function TreeNode(val, left, right) {
    this.val = val === undefined ? 0 : val;
    this.left = left === undefined ? null : left;
    this.right = right === undefined ? null : right;
}
globalThis.ListNode = ListNode;
globalThis.TreeNode = TreeNode;
globalThis.require = require;
Error.stackTraceLimit = 50;

class UcInvalid extends Error {}

const uc_ack = Buffer.alloc(1);

// A line on the report channel (descriptor 3), then the supervisor's acknowledgement
// (descriptor 4): the harness is stopped while the line is stamped.
function uc_write(text) {
    const data = Buffer.from(text, "utf8");
    let done = 0;
    while (done < data.length) done += uc_fs.writeSync(3, data, done, data.length - done);
    uc_fs.readSync(4, uc_ack, 0, 1, null);
}

function uc_offsets() {
    const at = (fd) => {
        try {
            return uc_fs.fstatSync(fd).size;
        } catch (e) {
            return -1;
        }
    };
    return '"stdout":' + at(1) + ',"stderr":' + at(2);
}

function uc_begin(k) {
    uc_write('{"begin":' + k + "}\n");
}

function uc_end(k, key, text) {
    uc_write('{"case":' + k + "," + uc_offsets() + ',"' + key + '":' + text + "}\n");
}

function uc_describe(e, call) {
    const frames = [];
    const stack = e && typeof e.stack === "string" ? e.stack.split("\n") : [];
    for (const line of stack) {
        const m = /at (?:(.*?) \()?solution\.js:(\d+):\d+\)?$/.exec(line.trim());
        if (m) frames.push({ line: Number(m[2]), function: m[1] || "" });
    }
    let type = typeof e;
    let message = "";
    try {
        type = e instanceof Error ? e.name : e && e.constructor ? e.constructor.name : typeof e;
        message = e instanceof Error ? String(e.message) : String(e);
    } catch (ignored) {}
    const error = { type, message: message.slice(0, 4096), frames: frames.slice(0, 20) };
    if (call !== undefined) error.call = call;
    return JSON.stringify(error);
}

function uc_load_error(kind, e, message) {
    const error = e !== undefined ? JSON.parse(uc_describe(e)) : { type: "ReferenceError", message, frames: [] };
    error.kind = kind;
    uc_write(JSON.stringify({ load_error: error }) + "\n");
}

// Types: "i" integer or long, "d" double, "b" boolean, "c" character, "s" string,
// "L" ListNode, "T" TreeNode, ["a", element] an array or list.
function uc_plain(t) {
    return t === "i" || t === "b" || t === "c" || t === "s" || (Array.isArray(t) && uc_plain(t[1]));
}

function uc_in(t, v) {
    if (t === "L") {
        let head = null;
        for (let i = v.length - 1; i >= 0; i--) head = new ListNode(v[i], head);
        return head;
    }
    if (t === "T") {
        if (v.length === 0) return null;
        const nodes = v.map((x) => (x === null ? null : new TreeNode(x)));
        let child = 1;
        for (const node of nodes) {
            if (child >= nodes.length) break;
            if (node === null) continue;
            node.left = nodes[child++];
            if (child < nodes.length) node.right = nodes[child++];
        }
        return nodes[0];
    }
    if (Array.isArray(t) && !uc_plain(t)) return v.map((x) => uc_in(t[1], x));
    return v;
}

function uc_json(v) {
    const text = JSON.stringify(v);
    return text === undefined ? "null" : text;
}

function uc_out(t, v) {
    if (v !== undefined && v !== null && ArrayBuffer.isView(v)) v = Array.from(v);
    if (uc_plain(t)) return uc_json(v);
    return uc_walk(t, v);
}

function uc_walk(t, v) {
    if (v === null || v === undefined) return "null";
    if (t === "d" && typeof v === "number") {
        if (Number.isNaN(v)) return '"NaN"';
        if (v === Infinity) return '"Infinity"';
        if (v === -Infinity) return '"-Infinity"';
        return uc_json(v);
    }
    if (t === "L") {
        let slow = v;
        let fast = v;
        while (fast !== null && fast !== undefined && fast.next !== null && fast.next !== undefined) {
            slow = slow.next;
            fast = fast.next.next;
            if (slow === fast) throw new UcInvalid("the returned linked list has a cycle");
        }
        const values = [];
        for (let n = v; n !== null && n !== undefined; n = n.next) values.push(n.val);
        return uc_json(values);
    }
    if (t === "T") {
        const seen = new Set();
        const queue = [v];
        const items = [];
        for (let i = 0; i < queue.length; i++) {
            const node = queue[i];
            if (node === null || node === undefined) {
                items.push("null");
                continue;
            }
            if (seen.has(node)) throw new UcInvalid("the returned tree has a cycle or a shared node");
            seen.add(node);
            items.push(uc_json(node.val));
            queue.push(node.left, node.right);
        }
        while (items.length > 0 && items[items.length - 1] === "null") items.pop();
        return "[" + items.join(",") + "]";
    }
    if (Array.isArray(t)) {
        if (ArrayBuffer.isView(v)) v = Array.from(v);
        if (!Array.isArray(v)) return uc_json(v);
        return "[" + v.map((x) => uc_walk(t[1], x)).join(",") + "]";
    }
    return uc_json(v);
}

// The binding `name` of the user's script, or undefined.
function uc_lookup(name) {
    return uc_vm.runInThisContext("typeof " + name + " === 'function' ? " + name + " : undefined");
}

function uc_run(target, run_case) {
    const lines = uc_fs
        .readFileSync(0, "utf8")
        .split("\n")
        .filter((line) => line.trim() !== "");
    try {
        uc_vm.runInThisContext(uc_fs.readFileSync(__dirname + "/solution.js", "utf8"), { filename: "solution.js" });
    } catch (e) {
        uc_load_error("exception", e);
        process.exit(0);
    }
    const found = uc_lookup(target);
    if (found === undefined) {
        uc_load_error("missing", undefined, "solution.js does not define " + target + " as a function or class");
        process.exit(0);
    }
    lines.forEach((line, k) => run_case(k, line, found));
    process.exit(0);
}
