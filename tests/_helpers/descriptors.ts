/**
 * The open file descriptors of this process that point into `prefix` (a
 * file or a folder), as `fd -> target` entries. Deno grants `/proc/self`
 * only with every permission, so a child `ls` lists `/proc/<pid>/fd`.
 */
export const descriptorsOn = (prefix: string): ReadonlyArray<string> => {
  const output = new Deno.Command("ls", {
    args: ["-l", `/proc/${Deno.pid}/fd`],
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
  if (!output.success) {
    throw new Error(new TextDecoder().decode(output.stderr));
  }
  return new TextDecoder().decode(output.stdout).split("\n")
    .filter((line) => line.includes(` -> ${prefix}`))
    .map((line) => line.slice(line.indexOf(" -> ") + 4));
};
