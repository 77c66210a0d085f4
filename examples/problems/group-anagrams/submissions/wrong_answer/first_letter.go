func groupAnagrams(strs []string) [][]string {
	groups := map[string][]string{}
	for _, s := range strs {
		key := ""
		if len(s) > 0 {
			key = s[:1]
		}
		groups[key] = append(groups[key], s)
	}
	out := [][]string{}
	for _, g := range groups {
		out = append(out, g)
	}
	return out
}
