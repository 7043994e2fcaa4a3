/**
 * classify — error kinds: a retry configuration's ordered error rules (pure data, validated the same
 * in the editor) and the classifier a retry-settle asks whether a failure is transient (retried),
 * permanent (parked at once) or done (acked).
 */
export { ERROR_KINDS, HTTP_STARTING_RULES, RULE_MATCHES, errorRuleProblems, parseStatusSpec, readErrorRules, ruleRegExp, statusMatches, type ErrorKind, type ErrorRule, type RuleMatch, type StatusSpec } from './rules';
export { ErrorClassifier, classifyFailure, permanentReason, type Classification, type ClassifyInput, type JsonataCompiler, type RulePredicate } from './match';
export { RETRY_AFTER_MAX_MS, parseRetryAfter, retryAfterOf } from './retry-after';
