func twoSum(nums []int, target int) []int {
	var seen map[int]int
	seen[nums[0]] = 0
	return nil
}
