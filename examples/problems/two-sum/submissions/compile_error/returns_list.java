class Solution {
    public List<Integer> twoSum(int[] nums, int target) {
        return new ArrayList<>();
    }
}
