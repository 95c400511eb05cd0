// Text imports (`import text from './file.pl?raw'`): Vite's own under vitest, build.mjs's raw-text plugin in the bundle.
declare module '*?raw' {
  const text: string;
  export default text;
}
