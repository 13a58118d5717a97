import { PageHeader } from '../components/ui';

export function Actions() {
  return <PageHeader title="Actions" />;
}
