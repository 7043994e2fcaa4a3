/** rules — the rules a node property follows, shared by the runtime and the editor (pure, browser-safe). */
export { contentTypeProblem, envNameProblem, isEnvReference, managementUrlProblem, nameProblem, numberProblem, oneOfProblem, parseRoutingKeys, reasonExpression, reasonFilterProblem, routingKeysProblem, utf8Length, type Problem } from './property-rules';
export { MAX_TIMER_SECONDS, readNumberField, readNumberFields, type NumberField, type NumberValues } from './number-fields';
export { regExpLiteral, type FlagGrammar } from './regexp-literal';
