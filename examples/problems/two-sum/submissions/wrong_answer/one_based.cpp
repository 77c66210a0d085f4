class Solution {
public:
    vector<int> twoSum(vector<int>& nums, int target) {
        unordered_map<int, int> seen;
        for (int i = 0; i < (int)nums.size(); ++i) {
            if (seen.count(target - nums[i])) return {seen[target - nums[i]] + 1, i + 1};
            seen[nums[i]] = i;
        }
        return {};
    }
};
