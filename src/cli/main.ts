import { Command } from 'commander';
import { registerAdminCommands } from './admin-commands.ts';
import { registerAuditCommand } from './audit-command.ts';
import { registerCampaignCommands } from './campaign/commands.ts';
import { registerProviderCommands } from './provider-commands.ts';
import { registerRunCommands } from './run-commands.ts';
import { registerStorageCommands } from './storage-commands.ts';

const program = new Command('adforge')
  .description('adforge: AI advertising media service (REST /api/v1 over HTTPS, jobs, admin)')
  .showHelpAfterError();
registerRunCommands(program);
registerAdminCommands(program);
registerAuditCommand(program);
registerCampaignCommands(program);
registerProviderCommands(program);
registerStorageCommands(program);
await program.parseAsync(process.argv);
