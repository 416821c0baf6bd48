import EntitlementTokens
print("tokeninspect")
