class Solution {
    public List<List<String>> groupAnagrams(String[] strs) {
        Map<Integer, List<String>> groups = new HashMap<>();
        for (String s : strs) groups.computeIfAbsent(s.length(), k -> new ArrayList<>()).add(s);
        return new ArrayList<>(groups.values());
    }
}
