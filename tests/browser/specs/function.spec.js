// A function-signature problem in the browser: the editor starts with each language's
// starter code, a draft survives a language switch, Run on typed arguments shows each case,
// and a wrong answer's sample case shows its arguments, the expected and the returned value.
import {
  test, expect, register, chooseLanguage, typeInEditor, expectVerdict, submitFromProblemPage,
  VERDICT_TIMEOUT,
} from '../lib/e2e.js';

const FIRST_TWO = 'class Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n        print("nums has", len(nums))\n        return [0, 1]\n';

test('the editor starts with the starter code; run and submit through the harness', async ({ page }) => {
  await register(page);
  await page.goto('/problems/two-sum');
  await expect(page.locator('#editor-host .cm-editor')).toBeVisible();
  await expect(page.locator('#function-hint')).toContainText('twoSum(nums, target)');

  // Only the harness languages, each starting from the signature in its own terms.
  const offered = await page.locator('#language option').evaluateAll((os) => os.map((o) => o.value));
  expect(offered).toContain('python3');
  expect(offered).not.toContain('c');
  await chooseLanguage(page, 'python3');
  await expect(page.locator('#editor-host .cm-content')).toContainText('def twoSum(self, nums: List[int], target: int) -> List[int]:');
  await chooseLanguage(page, 'java');
  await expect(page.locator('#editor-host .cm-content')).toContainText('public int[] twoSum(int[] nums, int target)');
  await chooseLanguage(page, 'go');
  await expect(page.locator('#editor-host .cm-content')).toContainText('func twoSum(nums []int, target int) []int');

  // A draft in Python survives a switch to Rust and back.
  await chooseLanguage(page, 'python3');
  await typeInEditor(page, FIRST_TWO);
  await chooseLanguage(page, 'rust');
  await expect(page.locator('#editor-host .cm-content')).toContainText('pub fn two_sum(nums: Vec<i32>, target: i32) -> Vec<i32>');
  await chooseLanguage(page, 'python3');
  await expect(page.locator('#source')).toHaveValue(FIRST_TWO);

  // Run on two cases: the first is a sample's arguments (compared), the second is not.
  await page.locator('#stdin').fill('[3,2,4]\n6\n[5,6]\n11\n');
  await page.locator('#run-button').click();
  const cases = page.locator('#run-result #run-cases > li');
  await expect(cases).toHaveCount(2, { timeout: VERDICT_TIMEOUT });
  await expect(cases.nth(0).locator('.verdict')).toHaveText('Wrong answer');
  await expect(cases.nth(0)).toContainText('nums has 3');
  await expect(cases.nth(1).locator('.verdict')).toHaveText('Accepted');
  await expect(cases.nth(1)).toContainText('[0,1]');

  // Submit: sample/2 fails, and its details are open on the submission page.
  await submitFromProblemPage(page);
  await expectVerdict(page, 'Wrong answer');
  const failed = page.locator('#verdict-panel details.case[open]');
  await expect(failed).toHaveCount(1);
  await expect(failed).toContainText('[3,2,4]');
  await expect(failed).toContainText('[1,2]');
  await expect(failed).toContainText('[0,1]');
});
