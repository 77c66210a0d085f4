class Solution {
public:
    vector<int> twoSum(vector<int>& nums, int target) {
        return {nums.at(nums.size()), 0};
    }
};
