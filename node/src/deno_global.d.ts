// Under Node there is no `Deno`. A source that looks at it must guard the
// look (`typeof Deno !== "undefined"`); declaring it possibly undefined makes
// the Node build refuse an unguarded use. (Copied into the build, never
// emitted.)
declare var Deno: undefined | { readonly [key: string]: any };
