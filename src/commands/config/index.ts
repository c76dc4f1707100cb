import type { Command } from 'commander';
import { UsageError } from '../../errors.js';
import {
  applyRunConfig,
  findRunConfig,
  NO_RUN_CONFIG,
  RUN_CONFIG_ENV,
  RUN_CONFIG_FILE,
  shownSettings,
  type ShownSetting,
} from '../common/run-config.js';

// `migrate config show [COMMAND]`: the settings a command would run with, each with where it came from (flag,
// environment, file, default), secrets never shown. What an operator checks before a cron line goes live.

/** The commands `config show` shows (the shell completion offers these). */
export const CONFIG_SHOW_COMMANDS: readonly string[] = ['push', 'validate', 'status', 'report', 'shape'];
const COMMANDS = CONFIG_SHOW_COMMANDS;

export function registerConfigCommand(program: Command): void {
  const config = program.command('config').description('the run configuration: show what a command would use');
  config
    .command('show [command] [flags...]')
    .description(
      `the settings of a command (${COMMANDS.join(', ')}; default push), given its flags, and where each comes from ` +
        '(e.g. config show push --concurrency 4)',
    )
    .option('--run-config <file>', `the run configuration (else ${RUN_CONFIG_ENV}, else ./${RUN_CONFIG_FILE})`)
    .option('--json', 'one JSON document: { run_config, command, settings: [{ key, value, source }] }')
    .allowUnknownOption()
    .action((name: string | undefined, flags: string[], options: { runConfig?: string; json?: boolean }) => {
      const commandName = name ?? 'push';
      const command = program.commands.find((candidate) => candidate.name() === commandName);
      if (command === undefined || !COMMANDS.includes(commandName))
        throw new UsageError(`config show ${commandName}: give one of ${COMMANDS.join(', ')}.`, 'config_show_command');
      takeFlags(command, flags);
      if (options.runConfig !== undefined) command.setOptionValueWithSource('runConfig', options.runConfig, 'cli');
      applyRunConfig(command, process.env, process.cwd());
      const file = findRunConfig(options.runConfig, process.env, process.cwd())?.file;
      const settings = shownSettings(command, process.env);
      if (options.json === true) {
        const document = { run_config: file ?? null, command: commandName, settings };
        process.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
        return;
      }
      const width = Math.max(...settings.map((setting) => setting.key.length));
      const shown = (setting: ShownSetting): string => {
        const value = setting.value === undefined ? undefined : JSON.stringify(setting.value).replace(/^"(.*)"$/, '$1');
        if (setting.variable === undefined) return value ?? describedDefault(command, setting.key) ?? '-';
        return value === undefined ? `${setting.variable} (not shown)` : `${setting.variable}=${value}`;
      };
      const valueWidth = Math.max(...settings.map((setting) => shown(setting).length));
      process.stdout.write(`run configuration: ${file ?? `none (${NO_RUN_CONFIG})`}\n`);
      process.stdout.write(`${commandName} would use:\n`);
      for (const setting of settings)
        process.stdout.write(
          `  ${setting.key.padEnd(width)}  ${shown(setting).padEnd(valueWidth)}  ${setting.source}\n`,
        );
    });
}

/**
 * The flags given after the command's name, parsed by that command's own options (their parsers, their refusals), as
 * the command itself would take them; a flag it does not have is refused naming the command.
 */
function takeFlags(command: Command, flags: string[]): void {
  const { operands, unknown } = command.parseOptions(flags);
  const stray = [...unknown, ...operands].find((arg) => arg.startsWith('-')) ?? operands[0];
  if (stray !== undefined)
    throw new UsageError(
      `config show ${command.name()}: ${stray} is not a flag of ${command.name()} (migrate ${command.name()} --help ` +
        'lists them); give the flags that command would be run with.',
      'config_show_flag',
    );
}

/** The default an option's help states ("(default 60)") where commander has none (it is resolved later). */
function describedDefault(command: Command, key: string): string | undefined {
  const attribute = key.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());
  const option = command.options.find((candidate) => candidate.attributeName() === attribute);
  const stated = /\(default:? ([^)]+)\)/.exec(option?.description ?? '')?.[1];
  return stated;
}
