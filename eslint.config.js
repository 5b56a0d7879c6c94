// ESLint flat config: typescript-eslint's strict preset plus limits that keep functions small.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "plugin/dist/**", "node_modules/**", ".apiserver/**"] },
  js.configs.recommended,
  ...tseslint.configs.strict,
  {
    files: ["**/*.ts"],
    rules: {
      complexity: ["error", 25],
      "max-depth": ["error", 4],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
      "@typescript-eslint/no-non-null-assertion": "off",
    },
  },
  {
    files: ["test/**/*.ts"],
    rules: { complexity: "off", "@typescript-eslint/no-unused-expressions": "off" },
  },
  {
    files: ["**/*.js", "**/*.mjs", "webhook/bin/vgate", "plugin/bin/*"],
    languageOptions: { globals: { process: "readonly", console: "readonly" } },
  },
);
