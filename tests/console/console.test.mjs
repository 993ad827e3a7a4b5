// The console page in headless Chromium (run by scripts/console-tests.sh, which serves the
// sample wiki and passes CONSOLE_URL, CONSOLE_ADMIN_KEY, CHROMIUM and CONSOLE_SCREENSHOTS).
import assert from "node:assert/strict";
import { chromium } from "playwright-core";

const url = process.env.CONSOLE_URL;
const adminKey = process.env.CONSOLE_ADMIN_KEY;
const shots = process.env.CONSOLE_SCREENSHOTS;
assert.ok(url && adminKey && shots, "CONSOLE_URL, CONSOLE_ADMIN_KEY and CONSOLE_SCREENSHOTS are required");

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  // Root in a container, and no background traffic: this machine's network is closed.
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
});
let failed = false;
const step = async (name, body) => {
  try {
    await body();
    console.log(`ok   ${name}`);
  } catch (e) {
    failed = true;
    console.log(`FAIL ${name}: ${e.message}`);
  } finally {
    await page.screenshot({ path: `${shots}/${name.replace(/\W+/g, "-")}.png`, fullPage: true });
  }
};
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
const consoleErrors = [];
page.on("pageerror", (e) => consoleErrors.push(e.message));

await page.goto(url);

await step("the page loads and shows the index health", async () => {
  await page.locator("#health-out dl.health").waitFor({ timeout: 10000 });
  const health = await page.locator("#health-out").innerText();
  assert.match(health, /build/);
  assert.match(health, /pages\s+\d+/);
  await page.locator("#clusters-out ul.clusters li").first().waitFor({ timeout: 10000 });
});

const ask = async (question) => {
  await page.fill("#bundle-form input[name=q]", question);
  await page.click("#bundle-form button");
  await page.locator("#bundle-out .coverage, #bundle-out .error").first().waitFor({ timeout: 10000 });
};

await step("a question shows sections, citations and a confidence", async () => {
  await ask("how do I publish a new index");
  const confidence = await page.locator("#bundle-out .coverage").getAttribute("data-confidence");
  assert.ok(["strong", "partial", "weak", "unknown"].includes(confidence), `confidence ${confidence}`);
  const sections = page.locator("#bundle-out .section");
  assert.ok((await sections.count()) > 0, "no sections");
  assert.match(await sections.first().locator(".cite").innerText(), /^\S+ @ \d+$/);
  console.log(`     confidence ${confidence}, ${await sections.count()} sections`);
});

await step("a briefing renders as markdown with its token count", async () => {
  await page.fill("#briefing-form input[name=clusters]", "operations");
  await page.fill("#briefing-form input[name=prompt]", "how do I rotate a key");
  await page.click("#briefing-form button");
  await page.locator("#briefing-markdown, #briefing-out .error").first().waitFor({ timeout: 10000 });
  assert.match(await page.locator("#briefing-tokens").innerText(), /^\d+ of \d+ tokens/);
  assert.ok((await page.locator("#briefing-markdown h2, #briefing-markdown h3, #briefing-markdown h4").count()) > 0, "no headings rendered");
});

const slugs = async () => page.locator("#bundle-out .section").evaluateAll((nodes) => nodes.map((n) => n.dataset.slug));

await step("a restricted page never shows without its key", async () => {
  await ask("Kestrel roadmap replicator");
  assert.ok(!(await slugs()).includes("EdgeRoadmap"), "EdgeRoadmap shown to an anonymous caller");
  assert.ok(!(await page.locator("#bundle-out").innerText()).toLowerCase().includes("kestrel roadmap"), "restricted text shown");
});

await step("the admin key shows the restricted page", async () => {
  await page.fill("#key", adminKey);
  await page.dispatchEvent("#key", "change");
  await ask("Kestrel roadmap replicator");
  assert.ok((await slugs()).includes("EdgeRoadmap"), `EdgeRoadmap missing for the admin: ${await slugs()}`);
});

await step("no script errors", async () => {
  assert.deepEqual(consoleErrors, []);
});

await browser.close();
if (failed) {
  console.log(`console tests FAILED (screenshots in ${shots})`);
  process.exit(1);
}
console.log(`console tests passed (screenshots in ${shots})`);
