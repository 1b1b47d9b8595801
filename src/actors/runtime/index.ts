/**
 * The durable actor runtime's one public entry: everything the app, the front doors and the
 * actor kinds use of it. Nothing outside src/actors/runtime imports another of its files
 * (test/importGraph.test.ts); the runtime's own tests may.
 */
export { ActorEventRefusedError, ActorUnloadableError, type RuntimeErrors } from './actorErrors.ts'
export { createActorJournalWatch, type ActorJournalWatch } from './actorJournalWatch.ts'
export { type ActorEntry, type ActorKind, type EffectContext, type EffectHandler, type EffectRow } from './actorKind.ts'
export { type NewEffect } from './actorRows.ts'
export { createActorRuntime, type ActorRuntime } from './actorRuntime.ts'
export { actorTimes, enqueue } from './actorStore.ts'
export { childEndEventSchema, type ChildEndEvent } from './childActors.ts'
export { childOfRunningEffect } from './effectScope.ts'
export { type ActorListQuery, type ActorSummary, type RuntimeAdmin, type RuntimeInspection, type TimelinePage } from './inspect.ts'
export { createKeyedListeners } from './keyedListeners.ts'
export { MAX_NOTIFY_PAYLOAD, createNodeBus, type NodeBus } from './nodeBus.ts'
export { planActions } from './planActions.ts'
export { createPoller } from './poller.ts'
export { type TraceHooks } from './runtimeCore.ts'
export { type ActorRecord, type RuntimeReadModel } from './read.ts'
export { contextIndexSql, effectKindIndexSql, type ContextIndex } from './schema/indexSql.ts'
export { migrateRuntimeSchema } from './schema/migrate.ts'
export { dropActorTriggerSql, dropStatusHookSql, statusHookSql } from './schema/statusHooks.ts'
export { mergeWrites, runSqlWrite, withTransaction, type Queryable, type SqlGuard, type SqlWrite } from './sql.ts'
export { actorRowsSql, actorTraceAtSql, nodeGoneSql, nodeLiveSql, sendEachSql, tellMatching } from './sqlApi.ts'
