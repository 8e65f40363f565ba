import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { Queue } from 'bullmq';
import type { FastifyPluginCallback } from 'fastify';

export const BULL_BOARD_PATH = '/queues';

/**
 * bull-board's UI and API for the worker's queues, to register under `BULL_BOARD_PATH` inside the
 * protected scope (same sign-in; its state-changing calls pass the same Origin check).
 */
export function bullBoardPlugin(queues: readonly Queue[]): FastifyPluginCallback {
  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(BULL_BOARD_PATH);
  createBullBoard({
    queues: queues.map((queue) => new BullMQAdapter(queue)),
    serverAdapter,
    options: {
      uiConfig: {
        boardTitle: 'receivables-sync',
        miscLinks: [{ text: 'Sync dashboard', url: '/' }],
      },
    },
  });
  return serverAdapter.registerPlugin();
}
