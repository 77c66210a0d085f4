// UltiCode's harness for function problems (generated). The user's code is in a file of its
// own; this file holds the runtime and, at its end, the generated call site.
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.util.*;

// @list-begin
class ListNode {
    int val;
    ListNode next;
    ListNode() {}
    ListNode(int val) { this.val = val; }
    ListNode(int val, ListNode next) { this.val = val; this.next = next; }
}
// @list-end
// @tree-begin
class TreeNode {
    int val;
    TreeNode left;
    TreeNode right;
    TreeNode() {}
    TreeNode(int val) { this.val = val; }
    TreeNode(int val, TreeNode left, TreeNode right) { this.val = val; this.left = left; this.right = right; }
}
// @tree-end

/** A returned value that cannot be written (a cycle): the case is an error, not a hang. */
final class UcInvalid extends RuntimeException {
    UcInvalid(String why) { super(why); }
}

/** Arguments that do not parse: the harness is broken (they were checked before). */
final class UcMalformed extends Error {
    UcMalformed(String what) { super(what); }
}

final class UcReader {
    final byte[] b;
    int p;
    final int end;

    UcReader(byte[] b, int p, int end) { this.b = b; this.p = p; this.end = end; }

    void ws() { while (p < end && (b[p] == ' ' || b[p] == '\t' || b[p] == '\r')) p++; }

    void expect(char c) {
        ws();
        if (p >= end || b[p] != c) throw new UcMalformed("punctuation");
        p++;
    }

    boolean open() {
        expect('[');
        ws();
        if (p < end && b[p] == ']') { p++; return false; }
        return true;
    }

    boolean next() {
        ws();
        if (p < end && b[p] == ',') { p++; return true; }
        expect(']');
        return false;
    }

    boolean isNull() {
        ws();
        if (p + 4 <= end && b[p] == 'n') { p += 4; return true; }
        return false;
    }

    long integer() {
        ws();
        boolean negative = p < end && b[p] == '-';
        if (negative) p++;
        if (p >= end || b[p] < '0' || b[p] > '9') throw new UcMalformed("integer");
        long v = 0;
        while (p < end && b[p] >= '0' && b[p] <= '9') v = v * 10 + (b[p++] - '0');
        return negative ? -v : v;
    }

    double number() {
        ws();
        int start = p;
        while (p < end && "+-0123456789.eE".indexOf(b[p]) >= 0) p++;
        return Double.parseDouble(new String(b, start, p - start, StandardCharsets.US_ASCII));
    }

    boolean bool() {
        ws();
        if (p + 4 <= end && b[p] == 't') { p += 4; return true; }
        p += 5;
        return false;
    }

    String str() {
        expect('"');
        StringBuilder s = new StringBuilder();
        int run = p;
        while (p < end && b[p] != '"') {
            if (b[p] != '\\') { p++; continue; }
            s.append(new String(b, run, p - run, StandardCharsets.UTF_8));
            p++;
            char c = (char) b[p++];
            switch (c) {
                case 'n': s.append('\n'); break;
                case 't': s.append('\t'); break;
                case 'r': s.append('\r'); break;
                case 'b': s.append('\b'); break;
                case 'f': s.append('\f'); break;
                case 'u': s.append((char) Integer.parseInt(new String(b, p, 4, StandardCharsets.US_ASCII), 16)); p += 4; break;
                default: s.append(c);
            }
            run = p;
        }
        if (p >= end) throw new UcMalformed("string");
        s.append(new String(b, run, p - run, StandardCharsets.UTF_8));
        p++;
        return s.toString();
    }

    char chr() {
        String s = str();
        return s.isEmpty() ? '\0' : s.charAt(0);
    }

    ArrayList<String> strings() {
        ArrayList<String> out = new ArrayList<>();
        if (open()) { do { out.add(str()); } while (next()); }
        return out;
    }
    // @list-begin

    ListNode list() {
        ArrayList<Integer> values = new ArrayList<>();
        if (open()) { do { values.add((int) integer()); } while (next()); }
        ListNode head = null;
        for (int i = values.size() - 1; i >= 0; i--) head = new ListNode(values.get(i), head);
        return head;
    }
    // @list-end
    // @tree-begin

    TreeNode tree() {
        ArrayList<TreeNode> nodes = new ArrayList<>();
        if (open()) { do { nodes.add(isNull() ? null : new TreeNode((int) integer())); } while (next()); }
        int child = 1;
        for (int i = 0; i < nodes.size() && child < nodes.size(); i++) {
            TreeNode node = nodes.get(i);
            if (node == null) continue;
            node.left = nodes.get(child++);
            if (child < nodes.size()) node.right = nodes.get(child++);
        }
        return nodes.isEmpty() ? null : nodes.get(0);
    }
    // @tree-end
}

final class UcWriter {
    static void str(StringBuilder w, String s) {
        if (s == null) { w.append("null"); return; }
        w.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"') w.append("\\\"");
            else if (c == '\\') w.append("\\\\");
            else if (c < 0x20) w.append(String.format("\\u%04x", (int) c));
            else w.append(c);
        }
        w.append('"');
    }

    static void dbl(StringBuilder w, double v) {
        if (Double.isNaN(v)) w.append("\"NaN\"");
        else if (Double.isInfinite(v)) w.append(v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
        else w.append(v);
    }
    // @list-begin

    static void list(StringBuilder w, ListNode head) {
        ListNode slow = head, fast = head;
        while (fast != null && fast.next != null) {
            slow = slow.next;
            fast = fast.next.next;
            if (slow == fast) throw new UcInvalid("the returned linked list has a cycle");
        }
        w.append('[');
        for (ListNode n = head; n != null; n = n.next) {
            if (n != head) w.append(',');
            w.append(n.val);
        }
        w.append(']');
    }
    // @list-end
    // @tree-begin

    static void tree(StringBuilder w, TreeNode root) {
        IdentityHashMap<TreeNode, Boolean> seen = new IdentityHashMap<>();
        ArrayList<TreeNode> queue = new ArrayList<>();
        queue.add(root);
        w.append('[');
        int kept = w.length();
        boolean first = true;
        for (int i = 0; i < queue.size() && root != null; i++) {
            TreeNode node = queue.get(i);
            if (!first) w.append(',');
            first = false;
            if (node == null) { w.append("null"); continue; }
            if (seen.put(node, Boolean.TRUE) != null) throw new UcInvalid("the returned tree has a cycle or a shared node");
            w.append(node.val);
            kept = w.length();
            queue.add(node.left);
            queue.add(node.right);
        }
        w.setLength(kept);
        w.append(']');
    }
    // @tree-end
}

/**
 * The report channel (descriptor 3) and the offsets of the user's output files. Each line
 * waits for the supervisor's acknowledgement (descriptor 4), so the harness is stopped while
 * the line is stamped.
 */
final class UcChannel {
    static FileOutputStream records;
    static FileInputStream ack;
    static final FileOutputStream OUT = new FileOutputStream(FileDescriptor.out);
    static final FileOutputStream ERR = new FileOutputStream(FileDescriptor.err);

    static void emit(String line) {
        try {
            if (records == null) {
                records = new FileOutputStream("/proc/self/fd/3");
                ack = new FileInputStream("/proc/self/fd/4");
            }
            records.write(line.getBytes(StandardCharsets.UTF_8));
            ack.read();
        } catch (IOException e) {
            Runtime.getRuntime().halt(4);
        }
    }

    static long position(FileOutputStream stream) {
        try {
            return stream.getChannel().position();
        } catch (IOException e) {
            return -1;
        }
    }

    static String offsets() {
        System.out.flush();
        System.err.flush();
        return "\"stdout\":" + position(OUT) + ",\"stderr\":" + position(ERR);
    }

    static void begin(int k) { emit("{\"begin\":" + k + "}\n"); }

    static void end(int k, String key, String json) {
        emit("{\"case\":" + k + "," + offsets() + ",\"" + key + "\":" + json + "}\n");
    }

    static String quoted(String s) {
        StringBuilder w = new StringBuilder();
        UcWriter.str(w, s);
        return w.toString();
    }

    static void error(int k, Throwable e, String userFile, int call) {
        StringBuilder w = new StringBuilder("{\"type\":");
        UcWriter.str(w, e.getClass().getName());
        String message = String.valueOf(e.getMessage());
        w.append(",\"message\":");
        UcWriter.str(w, message.length() > 4096 ? message.substring(0, 4096) : message);
        w.append(",\"frames\":[");
        int frames = 0;
        for (StackTraceElement element : e.getStackTrace()) {
            if (!userFile.equals(element.getFileName()) || frames == 20) continue;
            if (frames++ > 0) w.append(',');
            w.append("{\"line\":").append(element.getLineNumber()).append(",\"function\":");
            UcWriter.str(w, element.getMethodName());
            w.append('}');
        }
        w.append(']');
        if (call >= 0) w.append(",\"call\":").append(call);
        w.append('}');
        end(k, "error", w.toString());
    }
}
