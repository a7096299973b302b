import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

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
  // core/ only, so core code can reach a store through the contract alone). Zones name what is
  // allowed, so a folder added later is outside them too; dynamic import() is checked as well.
  // The conformance suite is exempt: it validates schedules as the scheduler does.
  {
    files: ['src/**/*.ts'],
    rules: {
      'import-x/no-restricted-paths': ['error', {
        zones: [
          { target: './src/core', from: './src', except: ['./core'], message: 'core/ imports only core/ (and packages)' },
          {
            target: './src/backend',
            from: './src',
            except: ['./backend', './core'],
            message: 'src/backend/ imports only core/ and itself: core code reaches a store through backend/contract.ts',
          },
        ],
      }],
    },
  },
  {
    files: ['src/backend/conformance/**/*.ts'],
    rules: {
      'import-x/no-restricted-paths': ['error', {
        zones: [{ target: './src/backend/conformance', from: './src', except: ['./backend', './core', './scheduler/schedule.ts'] }],
      }],
    },
  },
  // No import cycles anywhere in src/ or test/. The TypeScript resolver follows tsconfig.json, so a
  // NodeNext import of './x.js' is read as './x.ts' ('import-x/extensions' must list .ts, or the
  // rule skips every .ts module and silently finds nothing). Packages are not walked
  // (ignoreExternal): a cycle through node_modules is not ours to fix, and walking them costs time.
  // Type-only imports (`import type`, or `import { type A }` with every name a type) do not count:
  // import-x's no-cycle always skips them and has no option to count them. They are erased before
  // the code runs, so they cannot cause the load-order bugs a cycle does; a plain `import { A }`
  // counts even when A is only used as a type.
  {
    files: ['src/**/*.ts', 'test/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts', '.js', '.mjs'],
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: `${import.meta.dirname}/tsconfig.json` })],
    },
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: {
        process: 'readonly', console: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly',
        clearInterval: 'readonly', setImmediate: 'readonly', URL: 'readonly', Buffer: 'readonly', performance: 'readonly', fetch: 'readonly', AbortSignal: 'readonly',
      },
    },
  },
);
