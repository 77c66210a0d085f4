import "sort"

func groupAnagrams(strs []string) [][]string {
	groups := map[string][]string{}
	for _, s := range strs {
		key := []byte(s)
		sort.Slice(key, func(i, j int) bool { return key[i] < key[j] })
		groups[string(key)] = append(groups[string(key)], s)
	}
	out := [][]string{}
	for _, group := range groups {
		out = append(out, group)
	}
	return out
}
