import type { Command, Option } from 'commander';
import { UsageError } from '../errors.js';
import { HELP_TOPICS } from './help-topics.js';

// `migrate completion bash|zsh|fish`: a completion script written from the program itself (its commands and each
// command's options), so it never lists an option that is gone or misses a new one. Install as each shell expects:
//   bash: migrate completion bash > /etc/bash_completion.d/migrate   (or source <(migrate completion bash))
//   zsh:  migrate completion zsh > "${fpath[1]}/_migrate"
//   fish: migrate completion fish > ~/.config/fish/completions/migrate.fish

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
type Shell = (typeof SHELLS)[number];

interface CommandWords {
  name: string;
  summary: string;
  options: Array<{ flag: string; takesValue: boolean; help: string }>;
}

function wordsOf(program: Command): CommandWords[] {
  return program.commands.map((command) => ({
    name: command.name(),
    summary: command.summary() || command.description(),
    options: [...command.options, ...helpOption()].flatMap((option: Option) =>
      option.long === undefined
        ? []
        : [{ flag: option.long, takesValue: option.required || option.optional, help: option.description }],
    ),
  }));
}

function helpOption(): Option[] {
  return [{ long: '--help', required: false, optional: false, description: 'show help' } as Option];
}

export function completionScript(program: Command, shell: string): string {
  const known = SHELLS.find((name) => name === shell);
  if (known === undefined)
    throw new UsageError(`no completion for ${shell}; give one of ${SHELLS.join(', ')}.`, 'completion_shell');
  const commands = wordsOf(program);
  const write: Record<Shell, (words: CommandWords[]) => string> = { bash, zsh, fish };
  return write[known](commands);
}

function bash(commands: CommandWords[]): string {
  const cases = commands
    .map((command) => `    ${command.name}) opts="${command.options.map((option) => option.flag).join(' ')}" ;;`)
    .join('\n');
  const valued = commands.flatMap((command) => command.options.filter((o) => o.takesValue).map((o) => o.flag));
  return `# migrate completion for bash: source <(migrate completion bash)
_migrate() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" opts=""
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=( $(compgen -W "${commands.map((command) => command.name).join(' ')}" -- "$cur") )
    return
  fi
  if [ "\${COMP_WORDS[1]}" = help ]; then
    COMPREPLY=( $(compgen -W "${[...HELP_TOPICS, ...commands.map((command) => command.name)].join(' ')}" -- "$cur") )
    return
  fi
  case "\${COMP_WORDS[1]}" in
${cases}
  esac
  case " ${[...new Set(valued)].join(' ')} " in
    *" $prev "*) COMPREPLY=( $(compgen -f -- "$cur") ); return ;;
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
  else
    COMPREPLY=( $(compgen -f -- "$cur") )
  fi
}
complete -o filenames -F _migrate migrate
`;
}

/** Text inside a zsh _arguments spec or _describe entry: brackets and colons escaped. */
function zshText(text: string): string {
  return text.replace(/([[\]:\\'])/g, (char) => (char === "'" ? "'\\''" : `\\${char}`));
}

function zsh(commands: CommandWords[]): string {
  const described = commands.map((command) => `    '${command.name}:${zshText(command.summary)}'`).join('\n');
  const cases = commands
    .map((command) => {
      const specs = command.options.map(
        (option) => `'${option.flag}[${zshText(option.help)}]${option.takesValue ? ':value:_files' : ''}'`,
      );
      return `    ${command.name}) _arguments -s ${[...specs, "'*:file:_files'"].join(' ')} ;;`;
    })
    .join('\n');
  return `#compdef migrate
# migrate completion for zsh: migrate completion zsh > "\${fpath[1]}/_migrate"
_migrate() {
  local -a commands
  commands=(
${described}
  )
  if (( CURRENT == 2 )); then
    _describe 'command' commands
    return
  fi
  shift words
  (( CURRENT-- ))
  case $words[1] in
    help) _values 'topic' ${[...HELP_TOPICS, ...commands.map((command) => command.name)].join(' ')} ;;
${cases}
  esac
}
compdef _migrate migrate
`;
}

/** Text inside a fish single-quoted string. */
function fishText(text: string): string {
  return text.replace(/(['\\])/g, '\\$1');
}

function fish(commands: CommandWords[]): string {
  const lines = ['# migrate completion for fish: migrate completion fish > ~/.config/fish/completions/migrate.fish'];
  lines.push('complete -c migrate -f');
  for (const command of commands)
    lines.push(`complete -c migrate -n '__fish_use_subcommand' -a ${command.name} -d '${fishText(command.summary)}'`);
  for (const topic of HELP_TOPICS) lines.push(`complete -c migrate -n '__fish_seen_subcommand_from help' -a ${topic}`);
  for (const command of commands)
    for (const option of command.options)
      lines.push(
        `complete -c migrate -n '__fish_seen_subcommand_from ${command.name}' -l ${option.flag.slice(2)}` +
          `${option.takesValue ? ' -r -F' : ''} -d '${fishText(option.help)}'`,
      );
  for (const command of commands) lines.push(`complete -c migrate -n '__fish_seen_subcommand_from ${command.name}' -F`);
  return `${lines.join('\n')}\n`;
}

export function registerCompletionCommand(program: Command): void {
  program
    .command('completion <shell>')
    .description(`print a shell completion script (${SHELLS.join(', ')})`)
    .action((shell: string) => {
      process.stdout.write(completionScript(program, shell));
    });
}
