class Solution:
    def twoSum(self, nums: List[int], target: int) -> List[int]:
        while True:
            pass
