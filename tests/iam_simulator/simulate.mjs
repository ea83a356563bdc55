// Decides each request of a batch as AWS's policy evaluation would, with an independent IAM
// simulator (@cloud-copilot/iam-simulate, pinned in package.json, run on the project's Node).
// stdin: a JSON array of simulations (request, identity and resource policies, SCPs); stdout: a
// JSON array of {"result": "Allowed" | "ExplicitlyDenied" | "ImplicitlyDenied", "errors": ...},
// one per simulation, in order. A simulation the simulator refuses to run (a malformed policy, an
// action or context key it does not know) comes back with result "Error" and its errors.
//
// The simulator matches a condition key with a variable part only where the variable follows a
// '/' (aws:PrincipalTag/<key>), so it drops KMS's kms:EncryptionContext:<key> from a request
// as unknown (0.1.173). Such a key is renamed, in the policies and the request alike, to a global
// key of that shape, aws:RequestTag/kms:EncryptionContext:<key>: its value is compared by the
// same operators as before, as AWS compares the encryption context.
import { runSimulation } from '@cloud-copilot/iam-simulate'

const ENCRYPTION_CONTEXT = /^kms:encryptioncontext:/i
const renamed = (key) =>
  ENCRYPTION_CONTEXT.test(key) ? `aws:RequestTag/kms:EncryptionContext:${key.slice(22)}` : key

function renameConditionKeys(policy) {
  if (!policy) return policy
  const statements = [policy.Statement].flat().map((statement) => {
    if (!statement.Condition) return statement
    const condition = {}
    for (const [operator, pairs] of Object.entries(statement.Condition)) {
      condition[operator] = Object.fromEntries(
        Object.entries(pairs).map(([key, value]) => [renamed(key), value])
      )
    }
    return { ...statement, Condition: condition }
  })
  return { ...policy, Statement: statements }
}

const chunks = []
for await (const chunk of process.stdin) chunks.push(chunk)
const simulations = JSON.parse(Buffer.concat(chunks).toString('utf8'))
const results = []
for (const simulation of simulations) {
  const request = simulation.request
  const response = await runSimulation(
    {
      serviceControlPolicies: [],
      resourceControlPolicies: [],
      ...simulation,
      request: {
        ...request,
        contextVariables: Object.fromEntries(
          Object.entries(request.contextVariables).map(([key, value]) => [renamed(key), value])
        )
      },
      identityPolicies: simulation.identityPolicies.map((p) => ({
        ...p,
        policy: renameConditionKeys(p.policy)
      })),
      resourcePolicy: renameConditionKeys(simulation.resourcePolicy)
    },
    {}
  )
  results.push(
    response.resultType === 'error'
      ? { result: 'Error', errors: response.errors }
      : {
          result: response.overallResult,
          ignored: response.result?.ignoredContextKeys ?? [],
          errors: null
        }
  )
}
process.stdout.write(JSON.stringify(results))
