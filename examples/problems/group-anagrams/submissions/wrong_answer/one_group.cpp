class Solution {
public:
    vector<vector<string>> groupAnagrams(vector<string>& strs) {
        return {strs};
    }
};
