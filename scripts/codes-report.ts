// Prints the code extractor's precision and recall on the corpus (docs/codes.md), and
// every message where it found too much or too little. Run: npx tsx scripts/codes-report.ts
import { loadCorpus, measureCodes } from '../test/fixtures/codes/load-corpus.js';

const percent = (value: number): string => `${(value * 100).toFixed(1)} %`;

const messages = loadCorpus();
const metrics = measureCodes(messages);
const negatives = messages.filter((message) => message.codes.length === 0).length;
const languages = new Set(messages.map((message) => message.lang));

console.log(`messages: ${messages.length} (${negatives} without a code), languages: ${[...languages].sort().join(' ')}`);
console.log(`codes expected: ${metrics.truePositives + metrics.falseNegatives}, found right: ${metrics.truePositives}, found wrongly: ${metrics.falsePositives}, missed: ${metrics.falseNegatives}`);
console.log(`precision: ${percent(metrics.precision)}  recall: ${percent(metrics.recall)}  most likely first: ${metrics.firstRight}/${metrics.withCodes}`);
for (const result of metrics.results) {
  if (result.missed.length === 0 && result.wrong.length === 0) continue;
  console.log(`\n${result.message.file} ${result.message.id}`);
  if (result.missed.length > 0) console.log(`  missed: ${result.missed.join(', ')}`);
  if (result.wrong.length > 0) console.log(`  wrong:  ${result.wrong.join(', ')}`);
}
