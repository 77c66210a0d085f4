class Solution:
    def groupAnagrams(self, strs: List[str]) -> List[List[str]]:
        groups = defaultdict(set)  # loses repeated words
        for s in strs:
            groups["".join(sorted(s))].add(s)
        return [sorted(g) for g in groups.values()]
