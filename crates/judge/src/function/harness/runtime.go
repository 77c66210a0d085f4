// UltiCode's harness for function problems (generated). The user's code is solution.go.
package main

import (
	"io"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
)

// @list-begin
type ListNode struct {
	Val  int
	Next *ListNode
}

// @list-end
// @tree-begin
type TreeNode struct {
	Val   int
	Left  *TreeNode
	Right *TreeNode
}

// @tree-end

// uc_invalid: a returned value that cannot be written (a cycle).
type uc_invalid struct{ why string }

// uc_malformed: arguments that do not parse (they were checked before: the harness is broken).
type uc_malformed struct{ what string }

type uc_reader struct {
	b []byte
	p int
}

func (r *uc_reader) ws() {
	for r.p < len(r.b) && (r.b[r.p] == ' ' || r.b[r.p] == '\t' || r.b[r.p] == '\r') {
		r.p++
	}
}

func (r *uc_reader) expect(c byte) {
	r.ws()
	if r.p >= len(r.b) || r.b[r.p] != c {
		panic(uc_malformed{"punctuation"})
	}
	r.p++
}

func (r *uc_reader) open() bool {
	r.expect('[')
	r.ws()
	if r.p < len(r.b) && r.b[r.p] == ']' {
		r.p++
		return false
	}
	return true
}

func (r *uc_reader) next() bool {
	r.ws()
	if r.p < len(r.b) && r.b[r.p] == ',' {
		r.p++
		return true
	}
	r.expect(']')
	return false
}

func (r *uc_reader) null() bool {
	r.ws()
	if r.p+4 <= len(r.b) && r.b[r.p] == 'n' {
		r.p += 4
		return true
	}
	return false
}

func (r *uc_reader) integer() int64 {
	r.ws()
	negative := r.p < len(r.b) && r.b[r.p] == '-'
	if negative {
		r.p++
	}
	if r.p >= len(r.b) || r.b[r.p] < '0' || r.b[r.p] > '9' {
		panic(uc_malformed{"integer"})
	}
	var v uint64
	for r.p < len(r.b) && r.b[r.p] >= '0' && r.b[r.p] <= '9' {
		v = v*10 + uint64(r.b[r.p]-'0')
		r.p++
	}
	if negative {
		return int64(-v)
	}
	return int64(v)
}

func (r *uc_reader) number() float64 {
	r.ws()
	start := r.p
	for r.p < len(r.b) && strings.IndexByte("+-0123456789.eE", r.b[r.p]) >= 0 {
		r.p++
	}
	v, err := strconv.ParseFloat(string(r.b[start:r.p]), 64)
	if err != nil {
		panic(uc_malformed{"number"})
	}
	return v
}

func (r *uc_reader) boolean() bool {
	r.ws()
	if r.p+4 <= len(r.b) && r.b[r.p] == 't' {
		r.p += 4
		return true
	}
	r.p += 5
	return false
}

func (r *uc_reader) str() string {
	r.expect('"')
	var s []byte
	for r.p < len(r.b) && r.b[r.p] != '"' {
		c := r.b[r.p]
		r.p++
		if c != '\\' {
			s = append(s, c)
			continue
		}
		c = r.b[r.p]
		r.p++
		switch c {
		case 'n':
			s = append(s, '\n')
		case 't':
			s = append(s, '\t')
		case 'r':
			s = append(s, '\r')
		case 'b':
			s = append(s, '\b')
		case 'f':
			s = append(s, '\f')
		case 'u':
			cp, _ := strconv.ParseUint(string(r.b[r.p:r.p+4]), 16, 32)
			r.p += 4
			if cp >= 0xD800 && cp < 0xDC00 && r.p+6 <= len(r.b) && r.b[r.p] == '\\' && r.b[r.p+1] == 'u' {
				low, _ := strconv.ParseUint(string(r.b[r.p+2:r.p+6]), 16, 32)
				r.p += 6
				cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)
			}
			s = append(s, string(rune(cp))...)
		default:
			s = append(s, c)
		}
	}
	if r.p >= len(r.b) {
		panic(uc_malformed{"string"})
	}
	r.p++
	return string(s)
}

func (r *uc_reader) char() byte {
	s := r.str()
	if len(s) == 0 {
		return 0
	}
	return s[0]
}

func (r *uc_reader) strings() []string {
	out := []string{}
	if r.open() {
		for {
			out = append(out, r.str())
			if !r.next() {
				break
			}
		}
	}
	return out
}

// @list-begin
func (r *uc_reader) list() *ListNode {
	values := []int{}
	if r.open() {
		for {
			values = append(values, int(r.integer()))
			if !r.next() {
				break
			}
		}
	}
	var head *ListNode
	for i := len(values) - 1; i >= 0; i-- {
		head = &ListNode{Val: values[i], Next: head}
	}
	return head
}

// @list-end
// @tree-begin
func (r *uc_reader) tree() *TreeNode {
	nodes := []*TreeNode{}
	if r.open() {
		for {
			if r.null() {
				nodes = append(nodes, nil)
			} else {
				nodes = append(nodes, &TreeNode{Val: int(r.integer())})
			}
			if !r.next() {
				break
			}
		}
	}
	child := 1
	for i := 0; i < len(nodes) && child < len(nodes); i++ {
		if nodes[i] == nil {
			continue
		}
		nodes[i].Left = nodes[child]
		child++
		if child < len(nodes) {
			nodes[i].Right = nodes[child]
			child++
		}
	}
	if len(nodes) == 0 {
		return nil
	}
	return nodes[0]
}

// @tree-end
func uc_str(w []byte, s string) []byte {
	w = append(w, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			w = append(w, '\\', '"')
		case c == '\\':
			w = append(w, '\\', '\\')
		case c < 0x20:
			w = append(w, '\\', 'u', '0', '0', "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
		default:
			w = append(w, c)
		}
	}
	return append(w, '"')
}

func uc_double(w []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(w, "\"NaN\""...)
	case math.IsInf(v, 1):
		return append(w, "\"Infinity\""...)
	case math.IsInf(v, -1):
		return append(w, "\"-Infinity\""...)
	}
	return strconv.AppendFloat(w, v, 'g', -1, 64)
}

// @list-begin
func uc_list_out(w []byte, head *ListNode) []byte {
	slow, fast := head, head
	for fast != nil && fast.Next != nil {
		slow, fast = slow.Next, fast.Next.Next
		if slow == fast {
			panic(uc_invalid{"the returned linked list has a cycle"})
		}
	}
	w = append(w, '[')
	for n := head; n != nil; n = n.Next {
		if n != head {
			w = append(w, ',')
		}
		w = strconv.AppendInt(w, int64(n.Val), 10)
	}
	return append(w, ']')
}

// @list-end
// @tree-begin
func uc_tree_out(w []byte, root *TreeNode) []byte {
	w = append(w, '[')
	kept := len(w)
	seen := map[*TreeNode]bool{}
	queue := []*TreeNode{}
	if root != nil {
		queue = append(queue, root)
	}
	for i := 0; i < len(queue); i++ {
		if i > 0 {
			w = append(w, ',')
		}
		n := queue[i]
		if n == nil {
			w = append(w, "null"...)
			continue
		}
		if seen[n] {
			panic(uc_invalid{"the returned tree has a cycle or a shared node"})
		}
		seen[n] = true
		w = strconv.AppendInt(w, int64(n.Val), 10)
		kept = len(w)
		queue = append(queue, n.Left, n.Right)
	}
	return append(w[:kept], ']')
}

// @tree-end
var uc_records = os.NewFile(3, "records")
var uc_ack = os.NewFile(4, "acknowledgements")

// uc_emit writes a line on the report channel (descriptor 3), then waits for the
// supervisor's acknowledgement (descriptor 4): the harness is stopped while it is stamped.
func uc_emit(line []byte) {
	if _, err := uc_records.Write(line); err != nil {
		os.Exit(4)
	}
	var ack [1]byte
	uc_ack.Read(ack[:])
}

func uc_offsets(w []byte) []byte {
	out, err := syscall.Seek(1, 0, 1)
	if err != nil {
		out = -1
	}
	errs, err := syscall.Seek(2, 0, 1)
	if err != nil {
		errs = -1
	}
	w = append(w, "\"stdout\":"...)
	w = strconv.AppendInt(w, out, 10)
	w = append(w, ",\"stderr\":"...)
	return strconv.AppendInt(w, errs, 10)
}

// uc_begin starts case k's clock. The garbage of reading its arguments is collected first,
// so that a collection it would trigger does not run on the case's time.
func uc_begin(k int) {
	runtime.GC()
	uc_emit([]byte("{\"begin\":" + strconv.Itoa(k) + "}\n"))
}

func uc_end(k int, key string, json []byte) {
	line := []byte("{\"case\":" + strconv.Itoa(k) + ",")
	line = uc_offsets(line)
	line = append(line, ",\""+key+"\":"...)
	line = append(line, json...)
	uc_emit(append(line, '}', '\n'))
}

// uc_guard runs one case's calls; a panic becomes the case's error (or, for a value that
// cannot be written, its invalid result). `call` names the design class's call in progress.
func uc_guard(k int, call *int, body func()) (ok bool) {
	defer func() {
		recovered := recover()
		if recovered == nil {
			return
		}
		ok = false
		switch e := recovered.(type) {
		case uc_malformed:
			os.Stderr.WriteString("ulticode harness: malformed arguments (" + e.what + ")\n")
			os.Exit(3)
		case uc_invalid:
			uc_end(k, "invalid", uc_str(nil, e.why))
			return
		}
		message := "panic"
		switch e := recovered.(type) {
		case error:
			message = e.Error()
		case string:
			message = e
		}
		if len(message) > 4096 {
			message = message[:4096]
		}
		w := []byte("{\"type\":\"panic\",\"message\":")
		w = uc_str(w, message)
		w = append(w, ",\"frames\":["...)
		frames := 0
		lines := strings.Split(string(debug.Stack()), "\n")
		for i := 1; i < len(lines) && frames < 20; i++ {
			at := strings.TrimSpace(lines[i])
			if !strings.Contains(at, "/solution.go:") {
				continue
			}
			at = at[strings.LastIndex(at, "/solution.go:")+len("/solution.go:"):]
			if space := strings.IndexByte(at, ' '); space >= 0 {
				at = at[:space]
			}
			if _, err := strconv.Atoi(at); err != nil {
				continue
			}
			function := strings.TrimSpace(lines[i-1])
			if paren := strings.LastIndexByte(function, '('); paren > 0 {
				function = function[:paren]
			}
			function = strings.TrimPrefix(function, "main.")
			if frames > 0 {
				w = append(w, ',')
			}
			frames++
			w = append(w, "{\"line\":"+at+",\"function\":"...)
			w = uc_str(w, function)
			w = append(w, '}')
		}
		w = append(w, ']')
		if call != nil {
			w = append(w, ",\"call\":"...)
			w = strconv.AppendInt(w, int64(*call), 10)
		}
		uc_end(k, "error", append(w, '}'))
	}()
	body()
	return true
}

func uc_cases() [][]byte {
	input, _ := io.ReadAll(os.Stdin)
	lines := [][]byte{}
	for _, line := range strings.Split(string(input), "\n") {
		if strings.TrimSpace(line) != "" {
			lines = append(lines, []byte(line))
		}
	}
	return lines
}

func main() {
	for k, line := range uc_cases() {
		uc_case(k, &uc_reader{b: line})
	}
	os.Exit(0)
}
