class Solution:
    def twoSum(self, nums: List[int], target: int) -> List[int]:
        return [nums.index(target - nums[0]), len(nums) + nums[len(nums)]]
