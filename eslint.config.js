import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['*.js', '*.mjs'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/restrict-template-expressions': 'off',
      '@typescript-eslint/require-await': 'off',
    },
  },
  // Layers: the stores and core know nothing above them (core/ is pure; src/backend/ talks to
  // core/ only, so core code can reach a store through the contract alone).
  {
    files: ['src/core/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['../*', '!../core/*'], message: 'core/ imports only core/ (and packages)' }] }] },
  },
  {
    files: ['src/backend/**/*.ts'],
    ignores: ['src/backend/conformance/**'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{
          group: ['**/worker/*', '**/scheduler/*', '**/client/*', '**/server/*', '**/cli/*', '**/lock/*', '**/config/*', '**/observability/*', '**/examples/*'],
          message: 'src/backend/ imports only core/ and itself: core code reaches a store through backend/contract.ts',
        }],
      }],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: {
        process: 'readonly', console: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly',
        clearInterval: 'readonly', setImmediate: 'readonly', URL: 'readonly', Buffer: 'readonly', performance: 'readonly',
      },
    },
  },
);
