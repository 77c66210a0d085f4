var twoSum = function(nums, target) {
    const seen = new Map();
    for (let i = 0; i < nums.length; i++) {
        if (seen.has(target - nums[i])) return [String(seen.get(target - nums[i])), String(i)];
        seen.set(nums[i], i);
    }
    return [];
};
