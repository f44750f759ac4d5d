/** A progress line on a terminal's stderr, redrawn in place; nothing when not a terminal. */
export function progressBar(label: string): {
  update: (done: number, total: number) => void;
  done: () => void;
} {
  const tty = process.stderr.isTTY === true;
  let last = 0;
  return {
    update(done, total) {
      if (!tty) return;
      const now = Date.now();
      if (now - last < 100 && done < total) return;
      last = now;
      const width = 30;
      const filled = total === 0 ? width : Math.round((done / total) * width);
      process.stderr.write(
        `\r${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}`,
      );
    },
    done() {
      if (tty) process.stderr.write('\n');
    },
  };
}
