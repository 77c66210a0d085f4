class Solution {
    public int[] twoSum(int[] nums, int target) {
        int[] answer = new int[2];
        answer[2] = nums[0];
        return answer;
    }
}
