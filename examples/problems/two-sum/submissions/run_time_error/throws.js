var twoSum = function(nums, target) {
    throw new RangeError("no pair for " + target);
};
