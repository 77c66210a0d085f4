class Solution:
    def twoSum(self, nums: List[int], target: int) -> List[int]:
        seen = set()
        for x in nums:
            if target - x in seen:
                return [target - x, x]  # the values, not their indices
            seen.add(x)
        return []
