/**
 * The open file descriptors of this process that point into `prefix` (a
 * file or a folder), as `fd -> target` entries. Deno grants `/proc/self`
 * only with every permission, so a child `ls` lists `/proc/<pid>/fd`.
 */
export const descriptorsOn = (prefix: string): ReadonlyArray<string> => {
  // Descriptors that other work in the process closes while ls lists them
  // make it complain and exit 1; it still lists every one it could read.
  const output = new Deno.Command("ls", {
    args: ["-l", `/proc/${Deno.pid}/fd`],
    stdout: "piped",
    stderr: "null",
  }).outputSync();
  return new TextDecoder().decode(output.stdout).split("\n")
    .filter((line) => line.includes(` -> ${prefix}`))
    .map((line) => line.slice(line.indexOf(" -> ") + 4));
};
