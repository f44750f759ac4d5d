// Prints the plain closing line "N passed, M failed" that CI reads. It is written when the
// process exits, so it stays the last line, after Jest's own summary.
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    const tail = skipped > 0 ? `, ${skipped} skipped` : '';
    process.once('exit', () =>
      process.stdout.write(`\n${results.numPassedTests} passed, ${failed} failed${tail}\n`),
    );
  }
}
module.exports = SummaryReporter;
