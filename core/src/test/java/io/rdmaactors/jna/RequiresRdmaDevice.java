package io.rdmaactors.jna;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Skips a whole test class where no jna fabric with a device opens, before any of its set-up or
 * tear-down runs (the conformance classes' tear-down expects an open fabric).
 */
final class RequiresRdmaDevice implements ExecutionCondition {

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        String why = JnaFabrics.whyUnavailable();
        return why == null ? ConditionEvaluationResult.enabled("an RDMA device is present")
                : ConditionEvaluationResult.disabled(why);
    }
}
