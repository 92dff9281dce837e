import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'data/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      parserOptions: { projectService: { allowDefaultProject: ['*.js', 'bin/*.js', 'scripts/*.mjs'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      // node:test's test(), it() and describe() return promises that the runner itself awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite', 'before', 'after', 'beforeEach', 'afterEach'] },
          ],
        },
      ],
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    // Tests inspect JSON answers, which parse to `any`; their assertions are the type check there.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // node:test: `describe(name, async () => …)` and async helpers that only sometimes await.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // better-sqlite3's objects must never be left to the garbage collector (Node 24: see
    // src/store/sqlite-connection.ts), so connections and statements are made there only.
    files: ['**/*.ts'],
    ignores: ['src/store/sqlite-connection.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'better-sqlite3', allowTypeImports: true, message: 'open connections with openConnection() from src/store/sqlite-connection.ts' },
          ],
        },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.type='MemberExpression'][callee.property.name=/^(prepare|pragma|iterate|backup)$/]",
          message:
            "prepare(db, sql) from src/store/sqlite-connection.ts, and db.exec('PRAGMA …') to set a pragma: a statement left to the garbage collector can abort Node 24",
        },
      ],
    },
  },
);
