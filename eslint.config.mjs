import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', '.tap/', 'bench/results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-constant-condition': ['error', { checkLoops: false }],
      eqeqeq: ['error', 'smart'],
    },
  },
  {
    // The live calls page's own scripts run in the browser (src/ui/static/, docs/ui.md).
    files: ['src/ui/static/**/*.js'],
    languageOptions: {
      sourceType: 'module',
      globals: Object.fromEntries(
        ['window', 'document', 'location', 'fetch', 'AbortSignal', 'WebSocket', 'TextEncoder', 'btoa', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'].map((g) => [g, 'readonly']),
      ),
    },
  },
)
