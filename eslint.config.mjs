// ESLint for the Data view's browser code (include/era5etl/report/static/), run by
// tests/unit/report/test_static_js.py: the recommended rules, plus a few that catch real slips.
import js from "@eslint/js";

const browser = Object.fromEntries(
  ["window", "document", "fetch", "URLSearchParams", "FormData", "history", "location", "console"]
    .map((name) => [name, "readonly"]));

export default [
  js.configs.recommended,
  {
    files: ["include/era5etl/report/static/**/*.js"],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "script",
      globals: {...browser, uPlot: "readonly"},
    },
    rules: {
      "eqeqeq": "error",
      "no-var": "error",
      "prefer-const": "error",
      "no-implicit-globals": "error",
      "no-unused-vars": ["error", {args: "none"}],
    },
  },
];
